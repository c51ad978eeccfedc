"""Shared by every test folder: this folder is on ``sys.path`` (pytest puts a
conftest's folder there), so tests import the independent readings
(``reference``, ``feature_reference``, ``greedy_reference``) and ``helpers``
by their bare names, and the child-process harness from ``helpers``."""
