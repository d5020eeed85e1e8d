import type { Metadata } from 'next';
import type { ReactNode } from 'react';
import './globals.css';

// Every page is rendered per request: its Content-Security-Policy carries a fresh nonce (see
// src/proxy.ts), which Next.js can only put on the scripts of a page it renders now.
export const dynamic = 'force-dynamic';

export const metadata: Metadata = {
  title: 'Tracker',
  description: 'Projects, issues and an in-app assistant.',
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body className="min-h-screen">{children}</body>
    </html>
  );
}
