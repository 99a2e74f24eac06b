"""The hook path (L1): ``memdir hook EVENT``, on every tool call, standard library + kernel only."""
