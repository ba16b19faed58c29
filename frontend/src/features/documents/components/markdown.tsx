import type { Root } from 'hast'
import { toJsxRuntime, type Options } from 'hast-util-to-jsx-runtime'
import { useMemo, type ReactElement } from 'react'
import { Fragment, jsx, jsxs } from 'react/jsx-runtime'

// The library types its result as the global `JSX.Element`, which React 19's types no longer
// declare; this is the same function with React's element type.
const toReact = toJsxRuntime as (tree: Root, options: Options) => ReactElement

/** A HAST tree (from `renderMarkdown`) as React elements. */
export function MarkdownTree({ tree }: { tree: Root }): ReactElement {
  return useMemo(() => toReact(tree, { Fragment, jsx, jsxs }), [tree])
}
