------------------------- MODULE EmbeddingCacheBig --------------------------
(***************************************************************************)
(* For the big models (MCBig*, default_run false): a view that first      *)
(* evaluates the whole state.  Why: TLC 2.15 keeps a function built by     *)
(* [x \in S |-> e] unevaluated until something needs all of it; with a    *)
(* VIEW the state itself is never fingerprinted, so such a function may   *)
(* still be unevaluated when the state queue spills to disk (it does once *)
(* it holds some thousands of states), and writing it fails: "Error: when *)
(* writing the disk (StatePoolWriter.run): ... this.fcnRcd is null"       *)
(* (seen on MCBigS3Fifo at 9,521 queued states).  Comparing the state     *)
(* with itself evaluates every function in it; the view's value, hence    *)
(* the reduction, is unchanged.                                            *)
(***************************************************************************)

\* The view `view`, after evaluating `vars` (the tuple of all variables).
Evaluated(vars, view) == IF vars = vars THEN view ELSE view
=============================================================================
