"""Cases the suite derives from the case files rather than reads: broadcast variants of each
case (:mod:`.variants`) and the generated edges at the ends of domains and supports
(:mod:`.edges`, with the edge points of arrays and of float32 in :mod:`.array_edges` and
:mod:`.dtype_edges`)."""
