"""moto 5.2.5's TransactWriteItems deep-copies the whole table before each of its items, to roll back on a
refusal: one transaction costs O(table size × items), and tests with large tables spent minutes in `deepcopy`.
`install()` keeps moto's own transaction code and backs up only the items the transaction names instead."""

import copy


def install() -> None:
    from moto.dynamodb import models

    if getattr(models.DynamoDBBackend.transact_write_items, "lean", False):
        return

    class TablesUncopied:
        """The module's `copy`, but a Table is handed back as it is (the backup below replaces that copy)."""

        @staticmethod
        def deepcopy(value, memo=None):
            return value if isinstance(value, models.Table) else copy.deepcopy(value, memo)

    models.copy = TablesUncopied
    whole_table_backup = models.DynamoDBBackend.transact_write_items

    def transact_write_items(self, transact_items):
        backups = []
        # A refused transaction leaves no stream record either (moto's own code would copy the whole table back).
        streams = [table.stream_shard for table in self.tables.values() if table.stream_shard is not None]
        marks = [(shard, len(shard.items)) for shard in streams]
        for entry in transact_items:
            if len(entry) != 1:
                continue  # moto refuses it before writing anything
            ((kind, operation),) = entry.items()
            table = self.tables.get(operation.get("TableName"))
            source = operation.get("Item") if kind == "Put" else operation.get("Key")
            if table is None or not source or table.hash_key_attr not in source:
                continue
            key = {table.hash_key_attr: source[table.hash_key_attr]}
            if table.range_key_attr is not None:
                if table.range_key_attr not in source:
                    continue
                key[table.range_key_attr] = source[table.range_key_attr]
            current = self.get_item(table.name, key)
            backups.append((table.name, key, current.to_json()["Attributes"] if current is not None else None))
        try:
            whole_table_backup(self, transact_items)
        except Exception:
            for table_name, key, attributes in reversed(backups):
                if attributes is None:
                    self.delete_item(table_name, key)
                else:
                    self.put_item(table_name, attributes)
            for shard, length in marks:
                del shard.items[length:]
            raise

    transact_write_items.lean = True
    models.DynamoDBBackend.transact_write_items = transact_write_items
