import { LoaderCircle } from 'lucide-react'
import { useState, type SubmitEvent } from 'react'

import { Alert } from '@/components/ui/alert'
import { Button } from '@/components/ui/button'
import { Input } from '@/components/ui/input'
import { Field } from '@/components/ui/label'
import { errorMessage } from '@/lib/api-client'
import { field } from '@/lib/form'

import { useSignUp } from '../api/sign-in'
import { emailProblem, passwordProblem } from '../lib/messages'

type Errors = { name?: string; email?: string; password?: string; confirm?: string }

/** First run: the account created here is the admin. */
export function SetupForm({ onCreated }: { onCreated: () => void }) {
  const signUp = useSignUp()
  const [errors, setErrors] = useState<Errors>({})

  function submit(event: SubmitEvent<HTMLFormElement>) {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    const name = field(form, 'name').trim()
    const email = field(form, 'email').trim()
    const password = field(form, 'password')
    const confirm = field(form, 'confirm')
    const found: Errors = {
      name: name ? undefined : 'Enter your name.',
      email: emailProblem(email),
      password: passwordProblem(password, email),
      confirm: confirm === password ? undefined : 'The two passwords differ.',
    }
    setErrors(found)
    if (Object.values(found).some(Boolean)) return
    signUp.mutate({ email, password, display_name: name }, { onSuccess: onCreated })
  }

  const invalid = (key: keyof Errors) =>
    errors[key] ? { 'aria-invalid': true, 'aria-describedby': `${key}-error` } : {}

  return (
    <form noValidate onSubmit={submit} className="grid gap-4" aria-label="Create the admin account">
      {signUp.isError ? <Alert variant="destructive">{errorMessage(signUp.error)}</Alert> : null}
      <Field id="name" label="Your name" error={errors.name}>
        <Input id="name" name="name" autoComplete="name" autoFocus {...invalid('name')} />
      </Field>
      <Field id="email" label="Email" error={errors.email}>
        <Input id="email" name="email" type="email" autoComplete="username" {...invalid('email')} />
      </Field>
      <Field
        id="password"
        label="Password"
        hint="At least 10 characters. A sentence you will remember works well."
        error={errors.password}
      >
        <Input
          id="password"
          name="password"
          type="password"
          autoComplete="new-password"
          {...invalid('password')}
        />
      </Field>
      <Field id="confirm" label="Confirm password" error={errors.confirm}>
        <Input
          id="confirm"
          name="confirm"
          type="password"
          autoComplete="new-password"
          {...invalid('confirm')}
        />
      </Field>
      <Button type="submit" size="lg" disabled={signUp.isPending}>
        {signUp.isPending ? <LoaderCircle className="animate-spin" aria-hidden="true" /> : null}
        Create admin account
      </Button>
    </form>
  )
}
