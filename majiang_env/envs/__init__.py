"""The environment faces over the engine: PettingZoo AEC and Parallel
(``pettingzoo.py``), one seat as a Gymnasium env (``single_agent.py``), one
learning seat per game as a Gymnasium vector env (``seat_vector.py``).

This file imports nothing, so ``import majiang_env`` can register the Gymnasium
id below without loading a face.
"""
SINGLE_AGENT_ID = "majiang_env/SingleAgent-v1"
