'use client';
/** The panel's history view (the user's conversations) and the undo offer of a deletion. */
import { ConversationList } from '../ConversationList';
import { useAgentActions, useAgentSelector, useConversationHistoryList, usePanelUi } from '../panel-context';
import { selectBusy } from '../selectors';
import { UndoToast } from '../UndoToast';

/** "Deleted … Undo": shown in both views until it times out. */
export function HistoryUndo() {
  const history = useConversationHistoryList();
  return (
    <UndoToast
      undo={history.pendingUndo}
      error={history.undoError}
      onUndo={() => void history.undo()}
      onDismiss={history.dismissUndo}
    />
  );
}

export function PanelHistory() {
  const history = useConversationHistoryList();
  const { setPanelView } = usePanelUi();
  const { selectConversation, newConversation } = useAgentActions();
  const conversationId = useAgentSelector((state) => state.conversationId);
  const busy = useAgentSelector(selectBusy);
  return (
    <>
      <ConversationList
        items={history.items}
        currentId={conversationId}
        loading={history.loading}
        error={history.error}
        search={history.search}
        onSearch={history.setSearch}
        onSelect={(id) => {
          if (id !== conversationId) selectConversation(id);
          else setPanelView('chat');
        }}
        onRename={history.rename}
        onDelete={(id, title) => void history.remove(id, title)}
        onNew={() => newConversation()}
        hasMore={history.hasMore}
        onLoadMore={history.loadMore}
        disabled={busy}
      />
      <HistoryUndo />
    </>
  );
}
