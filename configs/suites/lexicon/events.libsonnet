// Events for the filler-gap suites: someone does something to an object somewhere, at some
// time ("our uncle | grabbed | the cake | in front of | the guests | yesterday").
{
  // Clauses that embed both "that ..." and "what/who ...".
  prefixes: [
    'I know', 'We know', 'She remembers', 'They saw', 'My neighbor told me', 'He learned',
    'Everyone knows', 'You remember', 'I found out', 'We heard', 'Nobody noticed',
    'My friend told me',
  ],

  // Who did it (noun phrases with their determiners).
  agents: [
    'our uncle', 'the chef', 'my sister', 'the waiter', 'the old man', 'her brother',
    'the teacher', 'the mechanic', 'the gardener', 'my cousin', 'the landlord', 'his mother',
    'the nurse', 'the baker', 'our neighbor', 'the young woman',
  ],

  // What they did: the verb, the kinds of object it takes and the kinds of place it happens in.
  verbs: [
    { form: 'grabbed', objects: ['food', 'item'], places: ['spot', 'audience', 'room'] },
    { form: 'dropped', objects: ['food', 'item'], places: ['spot', 'audience', 'room'] },
    { form: 'hid', objects: ['food', 'item'], places: ['spot', 'room'] },
    { form: 'left', objects: ['food', 'item'], places: ['spot', 'room'] },
    { form: 'found', objects: ['item'], places: ['spot', 'room'] },
    { form: 'put', objects: ['food', 'item'], places: ['spot'] },
    { form: 'placed', objects: ['food', 'item'], places: ['spot'] },
    { form: 'ate', objects: ['food'], places: ['audience'] },
    { form: 'stole', objects: ['item'], places: ['audience', 'room', 'shop'] },
    { form: 'forgot', objects: ['item'], places: ['room', 'shop'] },
    { form: 'lost', objects: ['item'], places: ['room', 'shop'] },
    { form: 'picked up', objects: ['food', 'item'], places: ['spot', 'room'] },
    { form: 'bought', objects: ['food', 'item'], places: ['shop'] },
  ],

  objects: [
    { form: 'the cake', kind: 'food' }, { form: 'the bread', kind: 'food' },
    { form: 'the apples', kind: 'food' }, { form: 'the pie', kind: 'food' },
    { form: 'the sandwiches', kind: 'food' }, { form: 'the cookies', kind: 'food' },
    { form: 'the keys', kind: 'item' }, { form: 'the wallet', kind: 'item' },
    { form: 'the umbrella', kind: 'item' }, { form: 'the camera', kind: 'item' },
    { form: 'the letter', kind: 'item' }, { form: 'the book', kind: 'item' },
    { form: 'the phone', kind: 'item' }, { form: 'the gloves', kind: 'item' },
  ],

  // Where: a preposition and its noun phrase, each in its own region.
  places: [
    { prep: 'next to', np: 'the window', kind: 'spot' },
    { prep: 'under', np: 'the table', kind: 'spot' },
    { prep: 'behind', np: 'the sofa', kind: 'spot' },
    { prep: 'near', np: 'the front door', kind: 'spot' },
    { prep: 'in front of', np: 'the guests', kind: 'audience' },
    { prep: 'in front of', np: 'the children', kind: 'audience' },
    { prep: 'in', np: 'the kitchen', kind: 'room' },
    { prep: 'in', np: 'the garage', kind: 'room' },
    { prep: 'in', np: 'the garden', kind: 'room' },
    { prep: 'at', np: 'the market', kind: 'shop' },
    { prep: 'at', np: 'the station', kind: 'shop' },
  ],

  times: [
    'yesterday', 'last night', 'this morning', 'on Sunday', 'after dinner', 'last week',
    'before lunch', 'an hour ago',
  ],
}
