import { LogOut } from 'lucide-react'
import { Link, useNavigate, useOutletContext } from 'react-router'

import { Badge } from '@/components/ui/badge'
import { Button } from '@/components/ui/button'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { PageHeader } from '@/components/ui/page-header'
import type { Me } from '@/features/auth/api/get-me'
import { useLogOut } from '@/features/auth/api/sign-in'
import { ChangePasswordForm } from '@/features/auth/components/change-password-form'
import { HealthStatus } from '@/features/health/components/health-status'
import { ConnectionsList } from '@/features/oauth/components/connections-list'
import { usePageTitle } from '@/lib/page-title'

export function AccountRoute() {
  usePageTitle('Account')
  const me = useOutletContext<Me>()
  const navigate = useNavigate()
  const logOut = useLogOut(() => { void navigate('/login', { replace: true }) })
  return (
    <div className="mx-auto grid max-w-6xl gap-6 *:max-w-3xl">
      <PageHeader
        title="Account"
        description="Your profile, your password and the apps you let act as you."
        actions={
          <Button
            variant="outline"
            onClick={() => {
              logOut.mutate()
            }}
          >
            <LogOut aria-hidden="true" />
            Sign out
          </Button>
        }
      />
      <Card>
        <CardHeader>
          <CardTitle>Profile</CardTitle>
        </CardHeader>
        <CardContent>
          <dl className="grid gap-3 text-sm sm:grid-cols-[10rem_1fr]">
            <dt className="text-muted-foreground">Name</dt>
            <dd>{me.display_name || '—'}</dd>
            <dt className="text-muted-foreground">Email</dt>
            <dd className="break-all">{me.email}</dd>
            <dt className="text-muted-foreground">Role</dt>
            <dd>
              <Badge variant="default" className="capitalize">{me.role}</Badge>
            </dd>
            <dt className="text-muted-foreground">Agent tools</dt>
            <dd className="flex flex-wrap gap-1">
              {me.tools.map((tool) => (
                <Badge key={tool} variant="outline" className="font-mono">{tool}</Badge>
              ))}
            </dd>
          </dl>
        </CardContent>
      </Card>
      <Card>
        <CardHeader>
          <CardTitle>Password</CardTitle>
          <CardDescription>Changing it signs you out everywhere else.</CardDescription>
        </CardHeader>
        <CardContent>
          <ChangePasswordForm email={me.email} />
        </CardContent>
      </Card>
      <Card>
        <CardHeader>
          <CardTitle>Connected apps</CardTitle>
          <CardDescription>
            MCP clients you approved. Each acts with your role; disconnecting ends its access at once.
          </CardDescription>
        </CardHeader>
        <CardContent>
          <ConnectionsList />
          {me.role === 'admin' ? (
            <p className="mt-3 text-sm text-muted-foreground">
              API keys for agents and other people are on{' '}
              <Link to="/people" className="font-medium text-foreground underline underline-offset-4">People</Link>; the
              clients&apos; configuration is on{' '}
              <Link to="/connect" className="font-medium text-foreground underline underline-offset-4">Connect an agent</Link>.
            </p>
          ) : null}
        </CardContent>
      </Card>
      {me.role === 'admin' ? (
        <Card>
          <CardHeader>
            <CardTitle>Server</CardTitle>
            <CardDescription>Whether Corpus and its database are up and ready.</CardDescription>
          </CardHeader>
          <CardContent>
            <HealthStatus />
          </CardContent>
        </Card>
      ) : null}
    </div>
  )
}
