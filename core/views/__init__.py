"""What the workbench's views read: the event stream folded per model request.

Every view of "how full was the context, and with what" — the window, the fullness
timeline, the largest items, the turn diff, the HTML report — reads the same fold of the
same typed events, whichever source produced them, so their numbers agree with each other
and with the events a ``--json`` script reads.
"""
