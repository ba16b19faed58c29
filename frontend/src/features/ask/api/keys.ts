const all = ['chats'] as const
const lists = [...all, 'list'] as const

/** Every query key of asking: `lists` covers every title search of the chat list,
 *  `detail(id)` one chat with its messages; `policy` the personas the scope picker offers, `tags` the tags it offers. */
export const chatKeys = {
  all,
  lists,
  list: (q: string) => [...lists, { q }] as const,
  detail: (id: string) => [...all, 'one', id] as const,
  policy: ['policy'] as const,
  tags: ['tags'] as const,
}
