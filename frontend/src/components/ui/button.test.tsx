import { render, screen } from '@testing-library/react'
import { describe, expect, it } from 'vitest'

import { Button } from '@/components/ui/button'

describe('Button', () => {
  it('is a plain button in the primary style unless told otherwise', () => {
    render(<Button>Save</Button>)
    const button = screen.getByRole('button', { name: 'Save' })
    expect(button).toHaveAttribute('type', 'button')
    expect(button).toHaveClass('bg-primary', 'h-8')
  })

  it('takes its variant and size, and a caller’s class wins over theirs', () => {
    render(
      <Button variant="outline" size="sm" className="h-10">
        Check again
      </Button>,
    )
    const button = screen.getByRole('button', { name: 'Check again' })
    expect(button).toHaveClass('border', 'bg-background', 'h-10', 'px-2')
    expect(button).not.toHaveClass('h-7')
    expect(button).not.toHaveClass('bg-primary')
  })
})
