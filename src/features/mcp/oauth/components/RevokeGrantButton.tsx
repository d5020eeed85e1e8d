'use client';
import { useState } from 'react';
import { btn, ConfirmButtons, ErrorText } from '@/features/tracker/components/ui';
import { useAction } from '@/features/tracker/components/use-action';
import { useTRPCClient } from '@/lib/trpc/client';

/** Disconnects an app (revokes its grant and every token of it), after a confirmation. */
export function RevokeGrantButton(props: { grantId: string; appName: string; projectId?: string }) {
  const client = useTRPCClient();
  const { run, error, pending } = useAction();
  const [confirming, setConfirming] = useState(false);
  if (!confirming) {
    return (
      <button
        type="button"
        className={btn.dangerOutline}
        onClick={() => setConfirming(true)}
        aria-label={`Disconnect ${props.appName}`}
      >
        Disconnect
      </button>
    );
  }
  return (
    <span
      role="group"
      aria-label={`Confirm disconnecting ${props.appName}`}
      className="inline-flex flex-wrap items-center justify-end gap-1"
    >
      <ConfirmButtons
        label="Confirm disconnect"
        pending={pending}
        onConfirm={async () => {
          await run(() =>
            props.projectId
              ? client.mcp.connectedApps.revokeInProject.mutate({ projectId: props.projectId, grantId: props.grantId })
              : client.mcp.connectedApps.revokeMine.mutate({ grantId: props.grantId }),
          );
          setConfirming(false);
        }}
        onCancel={() => setConfirming(false)}
      />
      <ErrorText message={error} />
    </span>
  );
}
