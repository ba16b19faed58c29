import { Bot, Boxes, FileText, KeyRound, Layers, Plug, Users } from 'lucide-react'
import {
  Area,
  AreaChart,
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts'

import { Badge } from '@/components/ui/badge'
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/components/ui/card'

import type { Dashboard } from '../api/dashboard'

const FIGURES = [
  { key: 'documents', label: 'Documents', icon: FileText },
  { key: 'chunks', label: 'Passages', icon: Layers },
  { key: 'workspaces', label: 'Workspaces', icon: Boxes },
  { key: 'people', label: 'People', icon: Users },
  { key: 'agents', label: 'Agents', icon: Bot },
] as const

export function Figures({ figures }: { figures: Dashboard['figures'] }) {
  return (
    <ul className="grid grid-cols-2 gap-3 sm:grid-cols-3 lg:grid-cols-5" aria-label="Figures">
      {FIGURES.map(({ key, label, icon: Icon }) => (
        <li key={key}>
          <Card className="grid gap-1 p-4">
            <span className="flex items-center gap-1.5 text-xs text-muted-foreground">
              <Icon className="size-3.5" aria-hidden="true" />
              {label}
            </span>
            <span className="text-2xl font-semibold tabular-nums" data-testid={`figure-${key}`}>
              {figures[key].toLocaleString()}
            </span>
          </Card>
        </li>
      ))}
    </ul>
  )
}

function shortDay(day: string): string {
  return new Date(`${day}T00:00:00Z`).toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' })
}

const AXIS = { fontSize: 11, fill: 'var(--muted-foreground)' }
const TOOLTIP = {
  contentStyle: {
    background: 'var(--card)',
    border: '1px solid var(--border)',
    borderRadius: 8,
    fontSize: 12,
    color: 'var(--card-foreground)',
  },
  labelFormatter: (day: unknown) => shortDay(String(day)),
}

/** The last 30 days: documents added, and searches and questions asked, by day (UTC). */
export function UsageCharts({ days }: { days: Dashboard['days'] }) {
  const total = (key: 'uploads' | 'searches' | 'questions') => days.reduce((sum, day) => sum + day[key], 0)
  return (
    <div className="grid min-w-0 gap-4 lg:grid-cols-2">
      <Card className="min-w-0">
        <CardHeader>
          <CardTitle>Documents added</CardTitle>
          <CardDescription>{total('uploads')} in the last 30 days</CardDescription>
        </CardHeader>
        <CardContent className="h-48" role="img" aria-label={`Documents added by day: ${total('uploads')} in 30 days`}>
          <ResponsiveContainer width="100%" height="100%" minWidth={0}>
            <BarChart data={days} margin={{ left: -20, right: 4, top: 4 }}>
              <CartesianGrid vertical={false} stroke="var(--border)" />
              <XAxis dataKey="day" tickFormatter={shortDay} tick={AXIS} tickLine={false} axisLine={false} minTickGap={24} />
              <YAxis allowDecimals={false} tick={AXIS} tickLine={false} axisLine={false} />
              <Tooltip {...TOOLTIP} cursor={{ fill: 'var(--muted)' }} />
              <Bar dataKey="uploads" name="Documents" fill="var(--primary)" radius={[3, 3, 0, 0]} minPointSize={0} isAnimationActive={false} />
            </BarChart>
          </ResponsiveContainer>
        </CardContent>
      </Card>
      <Card className="min-w-0">
        <CardHeader>
          <CardTitle>Searches and questions</CardTitle>
          <CardDescription>
            {total('searches')} searches, {total('questions')} questions in the last 30 days
          </CardDescription>
        </CardHeader>
        <CardContent
          className="h-48"
          role="img"
          aria-label={`Searches and questions by day: ${total('searches')} searches and ${total('questions')} questions in 30 days`}
        >
          <ResponsiveContainer width="100%" height="100%" minWidth={0}>
            <AreaChart data={days} margin={{ left: -20, right: 4, top: 4 }}>
              <CartesianGrid vertical={false} stroke="var(--border)" />
              <XAxis dataKey="day" tickFormatter={shortDay} tick={AXIS} tickLine={false} axisLine={false} minTickGap={24} />
              <YAxis allowDecimals={false} tick={AXIS} tickLine={false} axisLine={false} />
              <Tooltip {...TOOLTIP} />
              <Legend iconSize={8} wrapperStyle={{ fontSize: 12 }} />
              <Area dataKey="searches" name="Searches" stroke="var(--primary)" fill="var(--primary)" fillOpacity={0.15} isAnimationActive={false} />
              <Area dataKey="questions" name="Questions" stroke="var(--success)" fill="var(--success)" fillOpacity={0.15} isAnimationActive={false} />
            </AreaChart>
          </ResponsiveContainer>
        </CardContent>
      </Card>
    </div>
  )
}

function Shares({ title, rows }: { title: string; rows: { name: string; value: number; detail?: string }[] }) {
  const most = Math.max(1, ...rows.map((row) => row.value))
  return (
    <Card className="min-w-0">
      <CardHeader>
        <CardTitle>{title}</CardTitle>
      </CardHeader>
      <CardContent>
        {rows.length === 0 ? (
          <p className="text-sm text-muted-foreground">Nothing yet.</p>
        ) : (
          <ul className="grid gap-2">
            {rows.map((row) => (
              <li key={row.name} className="grid gap-1">
                <span className="flex min-w-0 items-baseline justify-between gap-2 text-sm">
                  <span className="truncate">{row.name}</span>
                  <span className="shrink-0 text-xs text-muted-foreground tabular-nums">
                    {row.value} {row.value === 1 ? 'document' : 'documents'}
                    {row.detail ? ` · ${row.detail}` : ''}
                  </span>
                </span>
                <span className="h-1.5 rounded-full bg-muted">
                  <span className="block h-full rounded-full bg-primary/70" style={{ width: `${(100 * row.value) / most}%` }} />
                </span>
              </li>
            ))}
          </ul>
        )}
      </CardContent>
    </Card>
  )
}

export function Composition({ dashboard }: { dashboard: Dashboard }) {
  return (
    <div className="grid min-w-0 gap-4 lg:grid-cols-2">
      <Shares
        title="By workspace"
        rows={dashboard.by_workspace.map((w) => ({ name: w.workspace, value: w.documents, detail: `${w.chunks} passages` }))}
      />
      <Shares title="By tag" rows={dashboard.by_tag.map((t) => ({ name: t.tag, value: t.documents }))} />
    </div>
  )
}

function ago(at: string | null | undefined): string {
  if (!at) return 'never'
  const minutes = Math.round((Date.now() - new Date(at).getTime()) / 60_000)
  if (minutes < 1) return 'just now'
  if (minutes < 60) return `${minutes} min ago`
  const hours = Math.round(minutes / 60)
  if (hours < 48) return `${hours} h ago`
  return `${Math.round(hours / 24)} days ago`
}

export { ago }

/** Each agent account (its keys) and OAuth app (the people who connected it), last seen first. */
export function AgentsTable({ agents }: { agents: Dashboard['agents'] }) {
  return (
    <Card className="min-w-0">
      <CardHeader>
        <CardTitle>Agents</CardTitle>
        <CardDescription>Agent accounts and connected apps, the last 30 days</CardDescription>
      </CardHeader>
      <CardContent>
        {agents.length === 0 ? (
          <p className="text-sm text-muted-foreground">
            No agent has connected yet. Mint a key for an agent account, or connect an MCP client.
          </p>
        ) : (
          <div className="overflow-x-auto">
            <table className="w-full min-w-[36rem] text-sm">
              <thead className="text-left text-xs text-muted-foreground">
                <tr>
                  <th className="py-1.5 pr-3 font-medium">Agent</th>
                  <th className="py-1.5 pr-3 font-medium">Access</th>
                  <th className="py-1.5 pr-3 text-right font-medium">
                    <abbr title="Searches, questions and the changes it made (uploads, edits, deletions), the last 30 days" className="no-underline">Calls</abbr>
                  </th>
                  <th className="py-1.5 pr-3 text-right font-medium">Searches</th>
                  <th className="py-1.5 pr-3 text-right font-medium">Questions</th>
                  <th className="py-1.5 font-medium">Last seen</th>
                </tr>
              </thead>
              <tbody className="divide-y">
                {agents.map((agent) => (
                  <tr key={`${agent.kind}-${agent.id}`}>
                    <td className="max-w-48 truncate py-2 pr-3">
                      <span className="flex items-center gap-2">
                        {agent.kind === 'account' ? (
                          <Bot className="size-4 shrink-0 text-muted-foreground" aria-label="Agent account" />
                        ) : (
                          <Plug className="size-4 shrink-0 text-muted-foreground" aria-label="Connected app" />
                        )}
                        <span className="truncate">{agent.name}</span>
                      </span>
                    </td>
                    <td className="py-2 pr-3">
                      {agent.kind === 'account' ? (
                        <Badge variant="outline">
                          <KeyRound className="size-3" aria-hidden="true" />
                          {agent.keys} {agent.keys === 1 ? 'key' : 'keys'}
                        </Badge>
                      ) : (
                        <Badge variant="outline">
                          {agent.people} {agent.people === 1 ? 'person' : 'people'}
                        </Badge>
                      )}
                    </td>
                    <td className="py-2 pr-3 text-right font-medium tabular-nums" data-testid="agent-calls">{agent.calls}</td>
                    <td className="py-2 pr-3 text-right tabular-nums">{agent.searches ?? '—'}</td>
                    <td className="py-2 pr-3 text-right tabular-nums">{agent.questions ?? '—'}</td>
                    <td className="py-2 text-xs text-muted-foreground">{ago(agent.last_seen_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </CardContent>
    </Card>
  )
}
