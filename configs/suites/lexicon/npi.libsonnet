// Matrix predicates that take a negative polarity item, for the NPI licensing suites.
{
  // "No farmer ... has had | any | success": the verb phrase up to the NPI, and its object.
  any_predicates: [
    { verb: 'has had', rest: 'success' },
    { verb: 'has had', rest: 'trouble' },
    { verb: 'has shown', rest: 'interest' },
    { verb: 'has made', rest: 'progress' },
    { verb: 'has made', rest: 'mistakes' },
    { verb: 'has received', rest: 'help' },
    { verb: 'has found', rest: 'work' },
    { verb: 'has won', rest: 'awards' },
    { verb: 'has given', rest: 'advice' },
    { verb: 'has expressed', rest: 'concern' },
    { verb: 'has offered', rest: 'support' },
    { verb: 'has asked', rest: 'questions' },
    { verb: 'has read', rest: 'books' },
    { verb: 'has told', rest: 'lies' },
  ],

  // "No farmer ... has | ever | been late": what follows "has ever".
  ever_predicates: [
    'been late', 'complained', 'won an award', 'told a lie', 'missed a meeting',
    'asked for help', 'broken a promise', 'lived abroad', 'been to Paris', 'ridden a horse',
    'played chess', 'been famous',
  ],
}
