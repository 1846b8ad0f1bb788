"""The live view (``mbstate view``, ``mbstate demo --view``): a page on loopback drawing a node's estimates."""
