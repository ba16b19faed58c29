import { ArrowRight, Check, Globe, LoaderCircle, ShieldAlert, ShieldCheck, X } from 'lucide-react'

import { useEffect } from 'react'

import { Alert } from '@/components/ui/alert'
import { Badge } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { Skeleton } from '@/components/ui/skeleton'
import { ApiError, errorMessage } from '@/lib/api-client'

import { useAnswerConsent, useConsent } from '../api/consent'

/** What an MCP client asks to do as the signed-in person. The redirect host leads: it is where
 *  the answer goes and the one thing a client cannot choose freely; its name is its own claim. */
export function ConsentScreen({
  tx,
  onUnauthenticated,
  go,
}: {
  tx: string
  onUnauthenticated: () => void
  go: (url: string) => void
}) {
  const consent = useConsent(tx)
  const answer = useAnswerConsent(tx)
  const signedOut = consent.error instanceof ApiError && consent.error.status === 401
  useEffect(() => {
    if (signedOut) onUnauthenticated()
  }, [signedOut, onUnauthenticated])

  if (consent.isPending) {
    return (
      <div className="grid gap-3" aria-busy="true" aria-label="Loading the request">
        <Skeleton className="h-7 w-3/4" />
        <Skeleton className="h-4 w-full" />
        <Skeleton className="h-24 w-full" />
      </div>
    )
  }
  if (consent.isError) {
    if (signedOut) return null
    const gone = consent.error instanceof ApiError && consent.error.status === 404
    return (
      <Alert variant="destructive">
        <ShieldAlert aria-hidden="true" />
        <div className="grid gap-1">
          <p className="font-medium">
            {gone ? 'This request has expired or was already answered.' : 'Could not load the request.'}
          </p>
          <p>
            {gone
              ? 'Go back to the app that sent you here and connect again.'
              : errorMessage(consent.error)}
          </p>
        </div>
      </Alert>
    )
  }

  const request = consent.data
  const answering = answer.isPending || answer.isSuccess
  return (
    <div className="grid gap-5">
      <div className="grid gap-2">
        <div className="flex size-10 items-center justify-center rounded-full bg-primary/10">
          <Globe className="size-5 text-primary" aria-hidden="true" />
        </div>
        <h1 className="text-xl font-semibold tracking-tight">
          Connect <span className="font-mono text-primary">{request.redirect_host}</span> to
          Corpus?
        </h1>
        <p className="text-sm text-muted-foreground">
          An app there wants to use Corpus as you. It calls itself{' '}
          <strong className="font-medium text-foreground">{request.client_name}</strong>
          {request.client_name_self_declared ? (
            <span data-testid="self-declared">
              {' '}
              — a name the app chose for itself; Corpus has not checked it
            </span>
          ) : null}
          .
        </p>
        {request.verified_domain ? (
          <p className="text-sm text-muted-foreground" data-testid="verified-domain">
            Corpus checked that it is the app published at{' '}
            <strong className="font-mono font-medium text-foreground">
              {request.verified_domain}
            </strong>
            .
          </p>
        ) : null}
      </div>

      <dl className="grid gap-3 rounded-lg border bg-muted/40 p-4 text-sm">
        <div className="grid gap-1">
          <dt className="text-xs font-medium text-muted-foreground">It will act with your role</dt>
          <dd>
            <Badge variant="default" className="capitalize">
              {request.role}
            </Badge>
          </dd>
        </div>
        <div className="grid gap-1">
          <dt className="text-xs font-medium text-muted-foreground">and may use these tools</dt>
          <dd className="flex flex-wrap gap-1">
            {request.tools.map((tool) => (
              <Badge key={tool} variant="outline" className="font-mono">
                {tool}
              </Badge>
            ))}
          </dd>
        </div>
        <div className="grid gap-1">
          <dt className="text-xs font-medium text-muted-foreground">After you answer, you go to</dt>
          <dd className="flex items-center gap-1 font-mono text-xs break-all">
            <ArrowRight className="size-3 shrink-0" aria-hidden="true" />
            {request.redirect_uri}
          </dd>
        </div>
      </dl>

      {answer.isError ? <Alert variant="destructive">{errorMessage(answer.error)}</Alert> : null}

      <div className="grid gap-2 sm:grid-cols-2">
        <Button
          variant="outline"
          size="lg"
          disabled={answering}
          onClick={() => {
            answer.mutate(false, { onSuccess: ({ redirect_to }) => { go(redirect_to) } })
          }}
        >
          <X aria-hidden="true" />
          Deny
        </Button>
        <Button
          size="lg"
          disabled={answering}
          onClick={() => {
            answer.mutate(true, { onSuccess: ({ redirect_to }) => { go(redirect_to) } })
          }}
        >
          {answering ? (
            <LoaderCircle className="animate-spin" aria-hidden="true" />
          ) : (
            <Check aria-hidden="true" />
          )}
          Approve
        </Button>
      </div>
      <p className="flex items-start gap-2 text-xs text-muted-foreground">
        <ShieldCheck className="mt-0.5 size-3.5 shrink-0" aria-hidden="true" />
        You can disconnect it at any time from your account page; its access ends at once.
      </p>
    </div>
  )
}
