# SPDX-License-Identifier: Apache-2.0
# bash completion for kuai (installed as
# ${datadir}/bash-completion/completions/kuai).

_kuai_files()
{
    if declare -F _filedir >/dev/null; then
        _filedir
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}

_kuai()
{
    local cur prev words cword
    if declare -F _init_completion >/dev/null; then
        _init_completion || return
    else # without the bash-completion package
        cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
        words=("${COMP_WORDS[@]}") cword=$COMP_CWORD
    fi

    local commands="encrypt decrypt speed selftest info help"
    local ciphers="ublock-128-128 ublock-128-256 ublock-256-256 sm4 aes-128 aes-192 aes-256"

    if ((cword == 1)); then
        COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
        return
    fi
    local cmd=${words[1]}

    case $prev in
    -c | --cipher)
        local names=$ciphers raw=0 w
        for w in "${words[@]}"; do [[ $w == --raw ]] && raw=1; done
        if ((raw)); then
            names=""
            for w in $ciphers; do
                names+=" $w-ecb $w-cbc $w-ctr"
                # CFB and OFB: 128-bit blocks only
                [[ $w == ublock-256-256 ]] || names+=" $w-cfb $w-ofb"
            done
        fi
        COMPREPLY=($(compgen -W "$names" -- "$cur"))
        return
        ;;
    --key-file | -o | --output | --json)
        _kuai_files
        return
        ;;
    -k | --key | --iv | -j | --threads | --scrypt-log2n | --reps | --backend)
        return
        ;;
    --mode)
        COMPREPLY=($(compgen -W "ecb cbc ctr gcm cbc-enc-mk short ecb-enc-sweep ctr-parallel" -- "$cur"))
        return
        ;;
    esac

    case $cmd in
    encrypt | enc | decrypt | dec)
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--cipher --key --key-file --password --scrypt-log2n
                --output --threads --force --quiet --raw --iv --nopad --help" -- "$cur"))
        else
            _kuai_files
        fi
        ;;
    speed)
        COMPREPLY=($(compgen -W "--cipher --mode --backend --threads --json --force --quick
            --reps --no-sweep --modes-ext --help" -- "$cur"))
        ;;
    selftest)
        COMPREPLY=($(compgen -W "-v --help" -- "$cur"))
        ;;
    info)
        COMPREPLY=($(compgen -W "--help" -- "$cur"))
        ;;
    help)
        COMPREPLY=($(compgen -W "encrypt decrypt speed selftest info" -- "$cur"))
        ;;
    esac
}
complete -F _kuai kuai
