"""The online estimator node: a thin runtime (sockets, queue, clock, statistics, recording)
around the fixed-lag smoother; replay drives the same estimator without sockets."""
