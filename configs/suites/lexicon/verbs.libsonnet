// Verbs and predicates about people, shared by the agreement, reflexive and NPI suites.
{
  // Past-tense verbs whose subject and object are both people: "the farmer that helped the
  // doctors", "the farmer that the doctors helped".
  transitive: [
    'helped', 'called', 'visited', 'thanked', 'met', 'admired', 'trusted', 'watched',
    'interviewed', 'hired', 'praised', 'greeted', 'ignored', 'recognized', 'invited',
    'followed', 'warned', 'blamed', 'liked', 'disliked',
  ],

  // Matrix predicates of a person subject: the verb (singular / plural) and what follows it.
  person_predicates: [
    { sg: 'is', pl: 'are', rest: 'tired' },
    { sg: 'is', pl: 'are', rest: 'smiling' },
    { sg: 'is', pl: 'are', rest: 'from Canada' },
    { sg: 'looks', pl: 'look', rest: 'happy' },
    { sg: 'works', pl: 'work', rest: 'very hard' },
    { sg: 'seems', pl: 'seem', rest: 'friendly' },
    { sg: 'lives', pl: 'live', rest: 'nearby' },
    { sg: 'knows', pl: 'know', rest: 'the answer' },
    { sg: 'was', pl: 'were', rest: 'late again' },
    { sg: 'has', pl: 'have', rest: 'a question' },
    { sg: 'wants', pl: 'want', rest: 'some coffee' },
    { sg: 'likes', pl: 'like', rest: 'jazz' },
  ],

  // Past-tense verbs that take a reflexive object naturally: "the king hurt himself".
  reflexive: [
    'hurt', 'blamed', 'praised', 'introduced', 'enjoyed', 'defended', 'injured',
    'congratulated', 'embarrassed', 'forgave', 'criticized', 'amused',
  ],
}
