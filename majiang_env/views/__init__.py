"""What a person sees: ``render.py`` (text, picture and HTML of a table) and
``play.py`` (``python -m majiang_env`` watch and play)."""
