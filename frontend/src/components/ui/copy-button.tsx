import { Check, Copy } from 'lucide-react'
import { useState } from 'react'
import { toast } from 'sonner'

import { Button, type ButtonProps } from '@/components/ui/button'

/** Copies `text` to the clipboard and says so; the label names what is copied. */
export function CopyButton({
  text,
  label,
  ...props
}: { text: string; label: string } & Omit<ButtonProps, 'onClick' | 'children'>) {
  const [copied, setCopied] = useState(false)
  return (
    <Button
      variant="outline"
      size="sm"
      {...props}
      onClick={() => {
        navigator.clipboard.writeText(text).then(
          () => {
            setCopied(true)
            toast.success('Copied')
          },
          () => toast.error('The browser did not allow copying: select the text instead'),
        )
      }}
    >
      {copied ? <Check aria-hidden="true" /> : <Copy aria-hidden="true" />}
      {label}
    </Button>
  )
}

/** A block of text to paste elsewhere (a secret, a command, a config file) with its copy button. */
export function CopyBlock({ text, label, name }: { text: string; label: string; name: string }) {
  return (
    <div className="grid gap-2">
      <pre
        aria-label={name}
        className="max-h-64 overflow-auto rounded-lg border bg-muted/50 p-3 font-mono text-xs leading-relaxed break-all whitespace-pre-wrap"
      >
        {text}
      </pre>
      <div>
        <CopyButton text={text} label={label} />
      </div>
    </div>
  )
}
