/**
 * Which of the project's assistant settings a reviewed conversation's runs went by: the version of
 * the tool permissions and of the instructions, with how many runs used each pair. Prop-driven.
 */
export function SettingsUsed({
  used,
}: {
  used: Array<{ policyVersion: number | null; instructionsVersion: number | null; runs: number }>;
}) {
  if (!used.length) return null;
  return (
    <section aria-labelledby="review-settings-used" className="text-sm" data-testid="review-settings-used">
      <h2 id="review-settings-used" className="font-semibold">
        Assistant settings used
      </h2>
      <ul className="mt-1 space-y-0.5">
        {used.map((u) => (
          <li
            key={`${u.policyVersion ?? 0}-${u.instructionsVersion ?? 0}`}
            data-policy-version={u.policyVersion ?? 0}
            data-instructions-version={u.instructionsVersion ?? 0}
          >
            {u.policyVersion ? `Tool permissions version ${u.policyVersion}` : 'Default tool permissions'},{' '}
            {u.instructionsVersion ? `instructions version ${u.instructionsVersion}` : 'no instructions'} · {u.runs} run
            {u.runs === 1 ? '' : 's'}
          </li>
        ))}
      </ul>
    </section>
  );
}
