"""Holds the sitecustomize.py that `inferscope run` puts on PYTHONPATH (this
directory itself, not its parent, goes on the path)."""
import os


def path():
    return os.path.dirname(os.path.abspath(__file__))
