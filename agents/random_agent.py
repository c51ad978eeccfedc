"""Uniformly random legal actions."""
import numpy as np


def game_obs(game, seat=None):
    """The AEC observation dict of ``seat`` (default: the player to act) of a ``Game``."""
    seat = game.current_player if seat is None else seat
    mask = game.legal_mask() if seat == game.current_player else np.zeros(156, np.int8)
    return {"observation": game.observe(seat), "action_mask": mask}


class RandomAgent:
    """Picks uniformly among the legal actions of the mask; seeded for repeatability."""

    def __init__(self, seed=None):
        self.rng = np.random.default_rng(seed)

    def __call__(self, obs) -> int:
        legal = np.flatnonzero(obs["action_mask"])
        if legal.size == 0:
            raise ValueError("RandomAgent: the action mask has no legal action")
        return int(legal[self.rng.integers(legal.size)])
