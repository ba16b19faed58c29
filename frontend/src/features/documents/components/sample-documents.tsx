import { LoaderCircle } from 'lucide-react'

import { Alert } from '@/components/ui/alert'
import { Button } from '@/components/ui/button'
import { errorMessage } from '@/lib/api-client'

import { useLoadSampleDocuments, type SampleLoaded } from '../api/documents'

function loadedMessage(loaded: SampleLoaded): string {
  const total = loaded.added + loaded.updated + loaded.unchanged
  if (loaded.added + loaded.updated === 0) {
    return `The ${total} sample documents were already loaded in workspace “${loaded.workspace}”.`
  }
  return `Loaded ${loaded.added + loaded.updated} sample documents (${loaded.chunks} passages) into workspace “${loaded.workspace}”.`
}

/** First run, once the admin exists: offer the sample documents (the project's own docs), so
 *  that a new install has something to search and ask. Loading them twice changes nothing. */
export function SampleDocuments({ onDone }: { onDone: () => void }) {
  const load = useLoadSampleDocuments()
  return (
    <section aria-labelledby="sample-heading" className="grid gap-4">
      <h2 id="sample-heading" className="text-lg font-semibold">
        Start with sample documents?
      </h2>
      <p className="text-sm text-muted-foreground">
        Corpus can load its own documentation into a workspace named “sample”, so you have
        something to search and ask right away. You can delete that workspace’s documents later.
      </p>
      {load.isError ? <Alert variant="destructive">{errorMessage(load.error)}</Alert> : null}
      {load.isSuccess ? (
        <Alert>{loadedMessage(load.data)}</Alert>
      ) : null}
      <div className="flex flex-wrap gap-2">
        {load.isSuccess ? (
          <Button size="lg" onClick={onDone}>
            Continue
          </Button>
        ) : (
          <>
            <Button
              size="lg"
              disabled={load.isPending}
              onClick={() => {
                load.mutate()
              }}
            >
              {load.isPending ? (
                <LoaderCircle className="animate-spin" aria-hidden="true" />
              ) : null}
              {load.isPending ? 'Loading sample documents…' : 'Load sample documents'}
            </Button>
            <Button size="lg" variant="outline" disabled={load.isPending} onClick={onDone}>
              Skip
            </Button>
          </>
        )}
      </div>
    </section>
  )
}
