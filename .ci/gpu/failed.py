"""Print the node ids that failed in the given results.json files (for a rerun on another device)."""
import json, sys
for path in sys.argv[1:]:
    try:
        records = json.load(open(path))["records"]
    except Exception as e:
        print(f"# {path}: {e}", file=sys.stderr); continue
    for r in records:
        if r["outcome"] in ("failed", "error"):
            print(r["nodeid"])
