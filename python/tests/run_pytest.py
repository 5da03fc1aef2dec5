"""Runs python/tests with pytest (the py_test entry point): every test_*.py beside this file
that the target lists in its data, printing the 12 slowest (CI time is cut by measurement)."""
import glob
import os
import sys

import pytest

if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    tests = sorted(glob.glob(os.path.join(here, "test_*.py")))
    sys.exit(pytest.main(tests + ["-q", "-p", "no:cacheprovider", "--durations=12"] + sys.argv[1:]))
