import { useState, type SubmitEvent } from 'react'

import { Alert } from '@/components/ui/alert'
import { Badge } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { Input, NativeSelect } from '@/components/ui/input'
import { Field } from '@/components/ui/label'
import { Skeleton } from '@/components/ui/skeleton'
import { errorMessage } from '@/lib/api-client'

import { useContextPreview } from '../api/workspaces'

/** The context block a persona would get for a question, footnote and failures included: what
 *  an edit to the policy changes. */
export function ContextPreview({
  personas,
  persona,
  onPersona,
}: {
  personas: string[]
  persona: string
  onPersona: (persona: string) => void
}) {
  const [text, setText] = useState('')
  const [query, setQuery] = useState('')
  const chosen = persona || personas[0] || ''
  const preview = useContextPreview(chosen, query)

  function submit(event: SubmitEvent) {
    event.preventDefault()
    setQuery(text.trim())
  }

  return (
    <Card>
      <CardHeader>
        <CardTitle>Preview a context block</CardTitle>
        <CardDescription>What a persona&apos;s agent gets in its system prompt for a question.</CardDescription>
      </CardHeader>
      <CardContent className="grid gap-4">
        <form onSubmit={submit} className="grid gap-3 sm:grid-cols-[12rem_1fr_auto] sm:items-end">
          <Field id="preview-persona" label="Persona">
            <NativeSelect id="preview-persona" value={chosen} onChange={(event) => { onPersona(event.target.value) }}>
              {personas.map((slug) => <option key={slug} value={slug}>{slug}</option>)}
            </NativeSelect>
          </Field>
          <Field id="preview-question" label="Question">
            <Input id="preview-question" value={text} onChange={(event) => { setText(event.target.value) }} maxLength={2000} />
          </Field>
          <Button type="submit" disabled={!text.trim() || !chosen}>Preview</Button>
        </form>
        {!query ? null : preview.isPending ? (
          <Skeleton className="h-32" aria-busy="true" aria-label="Building the context block" />
        ) : preview.isError ? (
          <Alert variant="destructive">{errorMessage(preview.error)}</Alert>
        ) : (
          <div className="grid min-w-0 gap-2">
            <div className="flex flex-wrap items-center gap-1 text-xs text-muted-foreground">
              <span>Searched</span>
              {preview.data.workspaces.map((w) => <Badge key={w} variant="outline">{w}</Badge>)}
              <span>· {preview.data.tokens} tokens{preview.data.cache_hit ? ' · from the cache' : ''}</span>
            </div>
            {preview.data.failures.map((failure) => (
              <Alert key={failure.workspace} variant="destructive">
                {failure.workspace}: {failure.reason}
              </Alert>
            ))}
            <pre aria-label="Context block" className="max-h-96 overflow-auto rounded-lg border bg-muted/50 p-3 font-mono text-xs leading-relaxed whitespace-pre-wrap [overflow-wrap:anywhere]">
              {preview.data.block || '(empty: nothing found)'}
            </pre>
          </div>
        )}
      </CardContent>
    </Card>
  )
}
