"""CI gates over compiler dumps: metrics per module, rules over metrics, baselines, diffs."""
