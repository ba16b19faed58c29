import { LoaderCircle } from 'lucide-react'
import { useState, type SubmitEvent } from 'react'

import { Alert } from '@/components/ui/alert'
import { Button } from '@/components/ui/button'
import { Input } from '@/components/ui/input'
import { Field } from '@/components/ui/label'
import { field } from '@/lib/form'

import { useChangePassword } from '../api/sign-in'
import { passwordFailure, passwordProblem } from '../lib/messages'

type Errors = { current?: string; next?: string; confirm?: string }

export function ChangePasswordForm({
  email,
  currentLabel = 'Current password',
  onChanged,
}: {
  email: string
  currentLabel?: string
  onChanged?: () => void
}) {
  const change = useChangePassword()
  const [errors, setErrors] = useState<Errors>({})

  function submit(event: SubmitEvent<HTMLFormElement>) {
    event.preventDefault()
    const formElement = event.currentTarget
    const form = new FormData(formElement)
    const current = field(form, 'current')
    const next = field(form, 'next')
    const confirm = field(form, 'confirm')
    const found: Errors = {
      current: current ? undefined : 'Enter your current password.',
      next:
        passwordProblem(next, email) ??
        (next === current ? 'Choose a password you have not used here.' : undefined),
      confirm: confirm === next ? undefined : 'The two passwords differ.',
    }
    setErrors(found)
    if (Object.values(found).some(Boolean)) return
    change.mutate(
      { current_password: current, new_password: next },
      {
        onSuccess: () => {
          formElement.reset()
          onChanged?.()
        },
      },
    )
  }

  const invalid = (key: keyof Errors) =>
    errors[key] ? { 'aria-invalid': true, 'aria-describedby': `${key}-error` } : {}

  return (
    <form noValidate onSubmit={submit} className="grid max-w-sm gap-4" aria-label="Change password">
      {change.isError ? <Alert variant="destructive">{passwordFailure(change.error)}</Alert> : null}
      {change.isSuccess ? <Alert variant="info">Your password is changed.</Alert> : null}
      <Field id="current" label={currentLabel} error={errors.current}>
        <Input
          id="current"
          name="current"
          type="password"
          autoComplete="current-password"
          {...invalid('current')}
        />
      </Field>
      <Field id="next" label="New password" hint="At least 10 characters." error={errors.next}>
        <Input id="next" name="next" type="password" autoComplete="new-password" {...invalid('next')} />
      </Field>
      <Field id="confirm" label="Confirm new password" error={errors.confirm}>
        <Input
          id="confirm"
          name="confirm"
          type="password"
          autoComplete="new-password"
          {...invalid('confirm')}
        />
      </Field>
      <div>
        <Button type="submit" disabled={change.isPending}>
          {change.isPending ? <LoaderCircle className="animate-spin" aria-hidden="true" /> : null}
          Change password
        </Button>
      </div>
    </form>
  )
}
