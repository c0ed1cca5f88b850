"""Lets ``pytest examples/kernels`` import ``kernels`` from this folder wherever pytest runs."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
