"""report.html and its figures, make tune's page and make gate's pipeline files, drawn from a results folder
alone; what the figures mean is analysis/'s."""
