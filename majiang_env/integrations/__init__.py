"""Trainer integrations: ``sb3.py`` (Stable-Baselines3 ``VecEnv``, the ``train``
extra) and ``rllib.py`` (RLlib multi-agent env and masked module, the ``rllib``
extra). Each imports its trainer, so import the module you use."""
