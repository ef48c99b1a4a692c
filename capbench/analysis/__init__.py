"""What the runs' figures mean: capacities compared with their confidence, the gate's verdict, E and its
caveats, the USL and scale-out curves, balance and bottleneck hints. Used during a run and by the reports;
nothing here draws or renders (report/ does)."""
