"""Runs python/tests with pytest (the py_test entry point): python/tests/test_ggml_whisper.py."""
import os
import sys

import pytest

if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    sys.exit(pytest.main([os.path.join(here, "test_ggml_whisper.py"), "-q", "-p", "no:cacheprovider"] + sys.argv[1:]))
