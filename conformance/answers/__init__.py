"""The oracle's answers as plain data: ``expect/`` fills these types, checks and reproducers
read them, so neither reader needs the oracle or the code that computes its answers."""
