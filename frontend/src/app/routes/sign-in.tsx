import { LoaderCircle } from 'lucide-react'
import { useState } from 'react'
import { Navigate, useNavigate, useSearchParams } from 'react-router'

import { Alert } from '@/components/ui/alert'
import { useSignInOptions } from '@/features/auth/api/get-sign-in-options'
import { LoginForm } from '@/features/auth/components/login-form'
import { SetupForm } from '@/features/auth/components/setup-form'
import { safeNext } from '@/features/auth/lib/safe-next'
import { SampleDocuments } from '@/features/documents/components/sample-documents'
import { errorMessage } from '@/lib/api-client'
import { usePageTitle } from '@/lib/page-title'

import { AuthFrame } from './auth-frame'

function Waiting() {
  return (
    <div className="flex justify-center py-6" aria-busy="true" aria-label="Loading">
      <LoaderCircle className="size-5 animate-spin text-muted-foreground" aria-hidden="true" />
    </div>
  )
}

export function LoginRoute() {
  const [params] = useSearchParams()
  const navigate = useNavigate()
  const options = useSignInOptions()
  const next = safeNext(params.get('next'))
  usePageTitle('Sign in')

  if (options.data?.first_run) return <Navigate to="/setup" replace />
  return (
    <AuthFrame title="Sign in to Corpus" description="The knowledge base your team and its agents share.">
      {options.isPending ? (
        <Waiting />
      ) : options.isError ? (
        <Alert variant="destructive">{errorMessage(options.error)}</Alert>
      ) : (
        <LoginForm
          sso={options.data.oidc}
          ssoError={params.get('error')}
          onSignedIn={() => { void navigate(next, { replace: true }) }}
        />
      )}
    </AuthFrame>
  )
}

export function SetupRoute() {
  usePageTitle('Welcome')
  const navigate = useNavigate()
  const options = useSignInOptions()
  // Once the admin account exists, the first run is over for the server; this screen's second
  // step (the sample documents) stays until it is taken or skipped.
  const [created, setCreated] = useState(false)
  if (created) {
    return (
      <AuthFrame
        title="Your admin account is ready"
        description="One more thing before you start."
      >
        <SampleDocuments onDone={() => { void navigate('/documents', { replace: true }) }} />
      </AuthFrame>
    )
  }
  if (options.data && !options.data.first_run) return <Navigate to="/login" replace />
  return (
    <AuthFrame
      title="Welcome to Corpus"
      description="No one has an account yet. The account you create now is the admin: it invites people and mints keys for agents."
    >
      {options.isPending ? (
        <Waiting />
      ) : options.isError ? (
        <Alert variant="destructive">{errorMessage(options.error)}</Alert>
      ) : (
        <SetupForm onCreated={() => { setCreated(true) }} />
      )}
    </AuthFrame>
  )
}
