"""The capacity report: figures, the Universal Scalability Law, bottleneck hints, report.html and the
capacity history (results/history.jsonl), all made from a results folder alone."""
