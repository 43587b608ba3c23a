"""Print the node ids that failed in the given results.json files, for a rerun on another
device (.ci/gpu/run.sh reruns the CUDA failures on the same machine's CPU)."""

import json
import sys

for path in sys.argv[1:]:
    try:
        with open(path, encoding="utf-8") as f:
            records = json.load(f)["records"]
    except (OSError, ValueError, KeyError) as exc:
        print(f"# {path}: {exc}", file=sys.stderr)
        continue
    for record in records:
        if record["outcome"] in ("failed", "error"):
            print(record["nodeid"])
