"""The GPU case of benchmarks/call_overhead.py, for the GPU host (no LLVM there):
benchmarks/run.sh call_overhead_cuda."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.argv.append("--gpu-only")
import call_overhead  # noqa: E402

call_overhead.main()
