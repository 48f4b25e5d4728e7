"""What if: a recorded session's trajectory played under other context strategies.

The recorded trajectory (the prompts, the model's replies, the tool results) stays exactly as
recorded; each strategy only changes what would have been *sent* at every request. From that
come the per-request tokens, a prefix-cache estimate, the cost, and whether the facts the
session later relied on were still visible. The model's behaviour under another policy is not
simulated: a different context might have made it act differently, and no recording can say
how.
"""
