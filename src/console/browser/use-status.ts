import { useState } from 'preact/hooks';

export interface Status {
  message: string;
  isError: boolean;
}

/** A page's last outcome, announced by its status region (see StatusLine). */
export function useStatus() {
  const [status, setStatus] = useState<Status>({ message: '', isError: false });
  return {
    status,
    say: (message: string) => setStatus({ message, isError: false }),
    fail: (message: string) => setStatus({ message, isError: true }),
  };
}
