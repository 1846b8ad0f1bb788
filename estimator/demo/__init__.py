"""``mbstate demo``: a live node on loopback fed by a simulated sensor process."""
