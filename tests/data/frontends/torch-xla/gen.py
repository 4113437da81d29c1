"""This folder's torch-xla programs: python gen.py OUT_DIR [name,name] (torch/torch-xla 2.9.0).

Each program runs in a child process of its own (`gen.py run NAME OUT_DIR`) on PJRT_DEVICE=CPU
with XLA_FLAGS --xla_dump_to/--xla_dump_hlo_as_text and, but for `mlp_step_plain`, with
XLA_IR_DEBUG=1 XLA_HLO_DEBUG=1 (torch-xla's switches for op_type/op_name/source metadata).
Inputs are made on the host and moved to the device, so the graphs kept are the programs' own;
the graphs compiled by the program's last `torch_xla.sync()` are copied to OUT_DIR/<program>/
(XLA's file names kept) with machine paths in `source_file` cut to the part after
site-packages/ (torch's own files) or to the file name (this generator).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from dumptools import copy_kept

KEEP = re.compile(
    r"cpu_after_optimizations(\.txt|-buffer-assignment\.txt|-memory-usage-report\.txt"
    r"|-live-range\.txt)$"
)
PLAIN = {"mlp_step_plain"}  # programs dumped without torch-xla's debug metadata
jobs = {}


def job(fn):
    jobs[fn.__name__] = fn
    return fn


def host(*shape, seed=0):
    import torch

    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def train_step(model, opt, x, y):
    """A classifier's training step: cross-entropy, backward, the optimizer's step."""
    import torch

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def mlp():
    import torch

    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(32, 128),
        torch.nn.ReLU(),
        torch.nn.Linear(128, 128),
        torch.nn.ReLU(),
        torch.nn.Linear(128, 10),
    )


@job
def mlp_adam_step(d):
    """An MLP's training step with torch.optim.Adam (second step: the moments exist)."""
    import torch

    model = mlp().to(d)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return train_step(model, opt, host(64, 32).to(d), (torch.arange(64) % 10).to(d))


@job
def mlp_step_plain(d):
    """mlp_adam_step's program with torch-xla's default dump (no XLA_HLO_DEBUG metadata)."""
    return mlp_adam_step(d)


@job
def cnn_sgd_step(d):
    """Conv, batch norm, ReLU, max pool, conv, average pool, linear; SGD with momentum."""
    import torch

    torch.manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1),
        nn.BatchNorm2d(16),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(32, 10),
    ).to(d)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return train_step(model, opt, host(8, 3, 32, 32).to(d), (torch.arange(8) % 10).to(d))


@job
def rnn_while_loop(d):
    """An Elman RNN over 20 steps with torch's while_loop: one XLA while (no autograd).

    torch-xla 2.9 builds the body from the tensors it reaches, in the order it reaches them,
    so the carried tuple is ordered (counter, limit, wh, h, wx, xs) to match that order."""
    import torch
    import torch_xla.experimental.fori_loop  # noqa: F401  (registers while_loop for XLA)
    from torch._higher_order_ops.while_loop import while_loop

    torch.set_grad_enabled(False)
    wx, wh, xs = host(16, 64) * 0.3, host(64, 64, seed=1) * 0.1, host(20, 8, 16, seed=2)

    def cond(i, limit, wh, h, wx, xs):
        return limit[0] > i[0]

    def body(i, limit, wh, h, wx, xs):
        one = torch.ones(1, dtype=torch.int32, device=d)
        x = torch.index_select(xs, 0, i).squeeze(0)
        return (
            i + one,
            limit.clone(),
            wh.clone(),
            torch.tanh(x @ wx + h @ wh),
            wx.clone(),
            xs.clone(),
        )

    def step():
        i0 = torch.tensor([0], dtype=torch.int32).to(d)
        limit = torch.tensor([20], dtype=torch.int32).to(d)
        carried = (i0, limit, wh.to(d), torch.zeros(8, 64).to(d), wx.to(d), xs.to(d))
        return while_loop(cond, body, carried)[3]

    def check(h):
        want = torch.zeros(8, 64)
        for t in range(20):
            want = torch.tanh(xs[t] @ wx + want @ wh)
        assert torch.allclose(h.cpu(), want, atol=1e-4), "the while loop computed something else"

    step.check = check
    return step


@job
def lstm_unrolled(d):
    """nn.LSTM over 6 steps with its gradient: torch-xla traces the recurrence unrolled."""
    import torch

    torch.manual_seed(0)
    lstm = torch.nn.LSTM(16, 32).to(d)
    xs = host(6, 4, 16).to(d)

    def step():
        out, _ = lstm(xs)
        loss = out.pow(2).mean()
        loss.backward()
        return loss

    return step


@job
def sort_topk(d):
    """torch.sort, argsort, topk, and gathers by the indices."""
    import torch

    x, v = host(64, 100).to(d), host(100, 8, seed=1).to(d)

    def step():
        s, _ = torch.sort(x, dim=-1)
        a = torch.argsort(-x, dim=-1)
        top, idx = torch.topk(x, 5, dim=-1)
        return s, a, top, v[idx[:, 0]], torch.gather(x, 1, a)

    return step


@job
def reductions(d):
    """Sums, means, amax, logsumexp, softmax, var_mean, cumsum, argmax, all."""
    import torch

    x = host(16, 32, 48).to(d)

    def step():
        var, mean = torch.var_mean(x, dim=(0, 1))
        return (
            x.sum((1, 2)),
            x.amax(0),
            torch.logsumexp(x, -1),
            torch.softmax(x, -1),
            mean,
            var,
            torch.cumsum(x, 1),
            x.argmax(-1),
            (x > -10).all(),
        )

    return step


@job
def inplace_donation(d):
    """In-place updates of device tensors (a KV cache's index_copy_, a counter's add_) and an
    explicitly donated buffer: torch-xla's input_output_alias."""
    import torch
    import torch_xla

    cache, counter = host(4, 64, 32).to(d), torch.zeros((), dtype=torch.int64).to(d)
    scratch = host(256, 32, seed=1).to(d)
    new, pos = host(4, 8, 32, seed=2).to(d), torch.arange(8, 16).to(d)

    def step():
        torch_xla._XLAC._set_buffer_donation(scratch, True)
        cache.index_copy_(1, pos, new)
        counter.add_(1)
        scratch.mul_(0.5).add_(1.0)
        return cache.sum()

    return step


@job
def mixed_dtypes(d):
    """bf16 and f16 matmuls, int8 arithmetic into int32, casts between them."""
    import torch

    a, b = host(64, 96).to(d), host(96, 48, seed=1).to(d)
    g = torch.Generator().manual_seed(3)
    qa = torch.randint(-127, 127, (64, 96), dtype=torch.int8, generator=g).to(d)
    qb = torch.randint(-127, 127, (96, 48), dtype=torch.int8, generator=g).to(d)

    def step():
        hb = a.to(torch.bfloat16) @ b.to(torch.bfloat16)
        hh = a.to(torch.float16) @ b.to(torch.float16)
        qi = qa.to(torch.int32) @ qb.to(torch.int32)
        q = torch.clamp(torch.round(qi.to(torch.float32) * 0.01), -127, 127).to(torch.int8)
        return hb.float() + hh.float(), q, hb.to(torch.float16), (qa >> 2) & qa.flip(0)

    return step


def run(name, out):
    """Child: run one program twice and keep the graphs of the last call that compiled any
    (the second, where an optimizer's state exists by then; else the first: cached)."""
    raw = tempfile.mkdtemp(prefix="torchxla_raw_")
    os.environ["PJRT_DEVICE"] = "CPU"
    os.environ["XLA_FLAGS"] = f"--xla_dump_to={raw} --xla_dump_hlo_as_text"
    if name not in PLAIN:
        os.environ["XLA_IR_DEBUG"] = "1"
        os.environ["XLA_HLO_DEBUG"] = "1"
    import torch_xla

    d = torch_xla.device()
    step = jobs[name](d)
    new = []
    for _ in range(2):
        torch_xla.sync()
        before = set(os.listdir(raw))
        result = step()
        torch_xla.sync()
        new = sorted(set(os.listdir(raw)) - before) or new
        if hasattr(step, "check"):
            step.check(result)
    copy_kept(raw, new, os.path.join(out, name), KEEP)
    print(name, [n for n in new if n.endswith("after_optimizations.txt")], flush=True)
    shutil.rmtree(raw, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3])
    else:
        out = os.path.abspath(sys.argv[1])
        only = set(sys.argv[2].split(",")) if len(sys.argv) > 2 else set()
        for name in jobs:
            if not only or name in only:
                subprocess.run([sys.executable, __file__, "run", name, out], check=True)
