// People: nouns with singular and plural forms and a grammatical gender.
// Gender-neutral occupations and roles (`neutral`) serve as subjects, attractors and objects;
// the gendered nouns serve reflexive agreement (himself / herself).
local person(sg, pl=sg + 's', gender='n') = { sg: sg, pl: pl, gender: gender };
local man(sg, pl=sg + 's') = person(sg, pl, 'm');
local woman(sg, pl=sg + 's') = person(sg, pl, 'f');

{
  // The feature schema of a people category (see docs/suite_authoring.md).
  features: { sg: 'string', pl: 'string', gender: ['m', 'f', 'n'] },

  neutral: [
    person('teacher'), person('doctor'), person('farmer'), person('pilot'),
    person('lawyer'), person('nurse'), person('student'), person('driver'),
    person('writer'), person('singer'), person('dancer'), person('baker'),
    person('banker'), person('manager'), person('engineer'), person('senator'),
    person('officer'), person('guard'), person('clerk'), person('customer'),
    person('tourist'), person('neighbor'), person('soldier'), person('athlete'),
    person('architect'), person('author'), person('chef'), person('judge'),
    person('reporter'), person('scientist'), person('surgeon'), person('librarian'),
    person('painter'), person('mechanic'), person('secretary', 'secretaries'),
    person('professor'),
  ],

  masculine: [
    man('king'), man('prince', 'princes'), man('boy'), man('man', 'men'),
    man('father'), man('son'), man('brother'), man('uncle'), man('nephew'),
    man('grandfather'), man('monk'), man('gentleman', 'gentlemen'),
    man('waiter'), man('actor'), man('policeman', 'policemen'),
    man('businessman', 'businessmen'), man('groom'),
  ],

  feminine: [
    woman('queen'), woman('princess', 'princesses'), woman('girl'), woman('woman', 'women'),
    woman('mother'), woman('daughter'), woman('sister'), woman('aunt'), woman('niece'),
    woman('grandmother'), woman('nun'), woman('lady', 'ladies'),
    woman('waitress', 'waitresses'), woman('actress', 'actresses'),
    woman('policewoman', 'policewomen'), woman('businesswoman', 'businesswomen'),
    woman('bride'),
  ],
}
