"""Records: results.json, one record per collected item, and how a run's reports become them."""
