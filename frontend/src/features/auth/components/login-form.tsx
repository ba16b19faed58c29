import { KeyRound, LoaderCircle } from 'lucide-react'
import { useState, type SubmitEvent } from 'react'

import { Alert } from '@/components/ui/alert'
import { Button, buttonVariants } from '@/components/ui/button'
import { Input } from '@/components/ui/input'
import { Field } from '@/components/ui/label'
import { field } from '@/lib/form'

import { useLogIn } from '../api/sign-in'
import { emailProblem, signInFailure, SSO_ERRORS } from '../lib/messages'

export function LoginForm({
  onSignedIn,
  sso,
  ssoError,
}: {
  onSignedIn: () => void
  sso: boolean
  ssoError?: string | null
}) {
  const logIn = useLogIn()
  const [errors, setErrors] = useState<{ email?: string; password?: string }>({})

  function submit(event: SubmitEvent<HTMLFormElement>) {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    const email = field(form, 'email').trim()
    const password = field(form, 'password')
    const found = {
      email: emailProblem(email),
      password: password ? undefined : 'Enter your password.',
    }
    setErrors(found)
    if (found.email ?? found.password) return
    logIn.mutate({ email, password }, { onSuccess: onSignedIn })
  }

  const failure = logIn.isError
    ? signInFailure(logIn.error)
    : ssoError
      ? (SSO_ERRORS[ssoError] ?? null)
      : null

  return (
    <form noValidate onSubmit={submit} className="grid gap-4" aria-label="Sign in">
      {failure ? <Alert variant="destructive">{failure}</Alert> : null}
      <Field id="email" label="Email" error={errors.email}>
        <Input
          id="email"
          name="email"
          type="email"
          autoComplete="username"
          autoFocus
          aria-invalid={errors.email ? true : undefined}
          aria-describedby={errors.email ? 'email-error' : undefined}
        />
      </Field>
      <Field id="password" label="Password" error={errors.password}>
        <Input
          id="password"
          name="password"
          type="password"
          autoComplete="current-password"
          aria-invalid={errors.password ? true : undefined}
          aria-describedby={errors.password ? 'password-error' : undefined}
        />
      </Field>
      <Button type="submit" size="lg" disabled={logIn.isPending}>
        {logIn.isPending ? <LoaderCircle className="animate-spin" aria-hidden="true" /> : null}
        Sign in
      </Button>
      {sso ? (
        <>
          <div className="flex items-center gap-3 text-xs text-muted-foreground">
            <span className="h-px flex-1 bg-border" />
            or
            <span className="h-px flex-1 bg-border" />
          </div>
          <a href="/api/auth/oidc/login" className={buttonVariants({ variant: 'outline', size: 'lg' })}>
            <KeyRound aria-hidden="true" />
            Sign in with single sign-on
          </a>
        </>
      ) : null}
    </form>
  )
}
