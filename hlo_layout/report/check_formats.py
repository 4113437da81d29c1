"""`check` results as machine formats: JSON, JUnit XML and GitHub Actions annotations (pure)."""

from __future__ import annotations

from typing import Any
from xml.etree import ElementTree as ET

from hlo_layout.check.run import CheckResult

#: 2: violations' `value` / `limit` are numbers (display strings moved to `value_text` /
#: `limit_text`); errors carry `line` / `column`; baseline pairing is reported.
SCHEMA_VERSION = 2


def check_json(result: CheckResult) -> dict[str, Any]:
    metrics = [m.as_json() for f in result.files for m in f.metrics]
    return {
        "schema_version": SCHEMA_VERSION,
        "passed": result.passed,
        "modules_checked": len(result.checked),
        "config": result.config,
        "violations": [v.as_json() for v in result.violations],
        "errors": [
            {
                "file": f.file,
                "message": f.failure.message,
                "line": f.failure.line,
                "column": f.failure.column,
                "text": f.error,
            }
            for f in result.errors
            if f.failure is not None
        ],
        "baseline_missing": list(result.baseline_missing),
        "baseline_unpaired": list(result.baseline_unpaired),
        "baseline_ambiguous": list(result.baseline_ambiguous),
        "baseline_pairs": [{"module": a, "baseline": b} for a, b in result.baseline_pairs],
        "warnings": list(result.warnings),
        "modules": metrics,
    }


def check_junit(result: CheckResult) -> str:
    """One <testcase> per checked module (failed when it has violations); unreadable files are
    <error> test cases. Elements and attributes required by the JUnit XML schema are present."""
    by_module: dict[tuple[str, str], list[Any]] = {}
    for v in result.violations:
        by_module.setdefault((v.module, v.file), []).append(v)
    suites = ET.Element("testsuites", name="hlo-layout check")
    suite = ET.SubElement(suites, "testsuite", name="hlo-layout check")
    tests = failures = errors = 0
    for module, file in result.checked:
        tests += 1
        case = ET.SubElement(suite, "testcase", name=module, classname=file, time="0")
        found = by_module.get((module, file), [])
        if found:
            failures += 1
            failure = ET.SubElement(
                case, "failure", message=f"{len(found)} budget violation(s)", type="budget"
            )
            failure.text = "\n".join(f"{v.rule}: {v.message}" for v in found)
    for f in result.errors:
        tests += 1
        errors += 1
        case = ET.SubElement(suite, "testcase", name=f.file, classname=f.file, time="0")
        error = ET.SubElement(case, "error", message="unreadable input", type="input")
        error.text = f.error or ""
    for element in (suites, suite):
        element.set("tests", str(tests))
        element.set("failures", str(failures))
        element.set("errors", str(errors))
    suite.set("skipped", "0")
    suite.set("time", "0")
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode")


def _escape(text: str) -> str:
    """GitHub workflow-command escaping of a message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_annotations(result: CheckResult) -> list[str]:
    """`::error file=...::message` lines (one per violation and per unreadable file)."""
    lines = [
        f"::error file={v.file},title=hlo-layout {v.rule}::"
        + _escape(f"{v.module}: {v.message} (limit {v.limit_text})")
        for v in result.violations
    ]
    lines += [
        f"::error file={f.file}{_position(f)},title=hlo-layout input::"
        + _escape(f.failure.message if f.failure else "")
        for f in result.errors
    ]
    return lines


def _position(f: Any) -> str:
    if f.failure is None or f.failure.line is None:
        return ""
    return f",line={f.failure.line},col={f.failure.column}"
