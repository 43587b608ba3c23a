"""Records: results.json, known failures, reproducers and the dialects they are written in, conventions."""
