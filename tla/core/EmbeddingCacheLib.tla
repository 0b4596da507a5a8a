-------------------------- MODULE EmbeddingCacheLib --------------------------
(***************************************************************************)
(* Constant-level helpers on sequences and functions, shared by the core  *)
(* (EmbeddingCache) and the policies' hooks.  A module without           *)
(* parameters: the policy modules extend it and also receive it through   *)
(* their INSTANCE of EmbeddingCachePolicy, and SANY accepts the same      *)
(* parameter-free definitions arriving by both paths.                     *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

\* The set of elements of a sequence.
Range(s) == {s[i] : i \in DOMAIN s}

\* The sequence s without any occurrence of x.
Remove(s, x) == SelectSeq(s, LAMBDA y : y # x)

\* The function f with x mapped to v (added if absent), and without x.
Put(f, x, v) == [y \in DOMAIN f \cup {x} |-> IF y = x THEN v ELSE f[y]]
Drop(f, x)   == [y \in DOMAIN f \ {x} |-> f[y]]

\* The sequences of at most n members of S (a finite Seq(S): the inductive
\* models' policy and door states, EmbeddingCacheInductive).
SeqsOf(S, n) == UNION {[1 .. m -> S] : m \in 0 .. n}

\* The sequences holding each member of the finite set S once.
Orders(S) == {s \in [1 .. Cardinality(S) -> S] : Range(s) = S}

Min(a, b) == IF a <= b THEN a ELSE b
Max(a, b) == IF a >= b THEN a ELSE b
=============================================================================
