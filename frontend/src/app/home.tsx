import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'
import { HealthStatus } from '@/features/health/components/health-status'

/** A screen composes features; only `src/app/` may import from more than one. */
export function Home() {
  return (
    <main className="flex min-h-svh items-center justify-center p-6">
      <Card className="w-full max-w-md">
        <CardHeader>
          <CardTitle>Corpus</CardTitle>
          <CardDescription>
            The knowledge base your coding agents and your team share.
          </CardDescription>
        </CardHeader>
        <CardContent>
          <HealthStatus />
        </CardContent>
      </Card>
    </main>
  )
}
