// Household objects and furniture, with predicates about objects.
local noun(sg, pl=sg + 's') = { sg: sg, pl: pl };
{
  // Objects: what a sentence is about ("the vase near the windows"); `small` ones can also be
  // under furniture ("the box under the tables", not "the lamp under the beds").
  objects: [
    noun('book') { small: true }, noun('box', 'boxes') { small: true },
    noun('bag') { small: true }, noun('basket') { small: true },
    noun('blanket') { small: true }, noun('toy') { small: true },
    noun('key') { small: true }, noun('umbrella') { small: true },
    noun('bottle') { small: true }, noun('hat') { small: true },
    noun('lamp') { small: false }, noun('plant') { small: false },
    noun('picture') { small: false }, noun('coat') { small: false },
    noun('clock') { small: false }, noun('vase') { small: false },
    noun('candle') { small: false }, noun('mirror') { small: false },
    noun('radio') { small: false }, noun('jacket') { small: false },
  ],

  // Furniture and fixtures: where objects are ("near the windows"); `under` says whether
  // something can be under it ("under the tables", not "under the windows").
  furniture: [
    noun('window') { under: false }, noun('door') { under: false },
    noun('cabinet') { under: false }, noun('bookcase') { under: false },
    noun('table') { under: true }, noun('desk') { under: true }, noun('bed') { under: true },
    noun('shelf', 'shelves') { under: true }, noun('sofa') { under: true },
    noun('bench', 'benches') { under: true }, noun('chair') { under: true },
  ],

  // Predicates true of any object: the verb (singular / plural) and what follows it.
  object_predicates: [
    { sg: 'is', pl: 'are', rest: 'old' },
    { sg: 'is', pl: 'are', rest: 'new' },
    { sg: 'is', pl: 'are', rest: 'dusty' },
    { sg: 'is', pl: 'are', rest: 'still here' },
    { sg: 'looks', pl: 'look', rest: 'expensive' },
    { sg: 'seems', pl: 'seem', rest: 'cheap' },
    { sg: 'belongs', pl: 'belong', rest: 'to my sister' },
    { sg: 'was', pl: 'were', rest: 'a gift' },
  ],
}
